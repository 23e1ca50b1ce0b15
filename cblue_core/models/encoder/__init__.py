"""A small character encoder pretrained here by masked-language modelling, shared by the built-in
task models.

``corpus`` reads the unlabelled text of the train splits and reference lists (never dev or test),
``vocab`` builds the character vocabulary and its Hugging Face tokenizer, ``data`` packs and masks
sequences, ``pretrain`` runs the resumable step-based training, ``export`` writes the model folder
and its card, ``command`` adds ``python -m cblue_core pretrain``. Nothing heavy is imported here
so that the command line stays fast.
"""
