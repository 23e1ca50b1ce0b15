"""LLMs behind OpenAI-compatible endpoints (vLLM, SGLang, Ollama, ``transformers serve``, hosted
APIs), declared by whoever runs the server and called by name as ``endpoint:NAME``.

:mod:`.config` reads the declarations (the TOML file named by ``$CBLUE_STUDIO_ENDPOINTS``),
:mod:`.prompts` turns a PromptCBLUE or CliMedBench example into the text sent,
:mod:`.client` makes one request with the official ``openai`` client, :mod:`.streaming` streams
one answer, :mod:`.redact` takes keys out of every text an endpoint sends back, and :mod:`.runner` sends many with bounded concurrency, reading and filling the workspace's
response cache (:mod:`cblue_core.store.responses`) so that a rerun re-sends nothing answered.
"""
