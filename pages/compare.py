"""The Compare page (its body: :mod:`app_pages.compare`)."""
from app_pages.compare import render
from app_pages.navigation import page_or_app

page_or_app(render)
