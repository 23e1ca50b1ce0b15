"""CBLUE Studio core: tasks, records, readers, storage, metrics and rendering.

Importable and testable without Streamlit: nothing in this package imports it.
"""

__version__ = "0.1.0"
