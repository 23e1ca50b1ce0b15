"""The Errors page (its body: :mod:`app_pages.errors_tabs`)."""
from app_pages.errors_tabs import render
from app_pages.navigation import page_or_app

page_or_app(render)
