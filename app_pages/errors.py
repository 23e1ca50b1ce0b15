"""Errors page (see :mod:`app_pages.errors_tabs`)."""
from app_pages.errors_tabs import render

render()
