"""CBLUE Studio core: tasks, records, readers, storage, metrics and rendering.

Importable and testable without Streamlit (only ``cblue_core.render`` may touch ``st``).
"""

__version__ = "0.1.0"
