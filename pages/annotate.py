"""The Annotate page (its body: :mod:`app_pages.annotate`)."""
from app_pages.annotate import render
from app_pages.navigation import page_or_app

page_or_app(render)
