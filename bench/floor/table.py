"""The floor of a cold open of a page with a table: a bare Streamlit page showing a data grid of
the size of a per-label table (45 labels x 8 columns), opened the way ``bench/cold_opens.py``
opens ours. Nothing of the app is imported."""
import numpy as np
import pandas as pd
import streamlit as st

rng = np.random.default_rng(0)
table = pd.DataFrame({"label": [f"label {i}" for i in range(45)],
                      **{name: rng.integers(0, 5000, 45) for name in ("tp", "fp", "fn", "support")},
                      **{name: rng.random(45) for name in ("precision", "recall", "f1")}})
st.title("Streamlit floor with a table")
st.dataframe(table, hide_index=True)
