"""The Live page (its body: :mod:`app_pages.live_page`)."""
from app_pages.live_page import render
from app_pages.navigation import page_or_app

page_or_app(render)
