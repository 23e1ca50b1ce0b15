"""The floor of a cold open: a bare Streamlit page (a title and a line of text), opened the way
``bench/cold_opens.py`` opens ours. Nothing of the app is imported."""
import streamlit as st

st.title("Streamlit floor")
st.write("A bare Streamlit page: a title and a line of text.")
