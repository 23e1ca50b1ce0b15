"""The Admin page (its body: :mod:`app_pages.admin`)."""
from app_pages.admin import render
from app_pages.navigation import page_or_app

page_or_app(render)
