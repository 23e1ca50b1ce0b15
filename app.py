"""CBLUE Studio: entry point. `streamlit run app.py`"""
from app_pages.navigation import main

main()
