"""The Runs page (its body: :mod:`app_pages.runs`)."""
from app_pages.navigation import page_or_app
from app_pages.runs import render

page_or_app(render)
