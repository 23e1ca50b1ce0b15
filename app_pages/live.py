"""Live page (see :mod:`app_pages.live_page`)."""
from app_pages.live_page import render

render()
