"""The Datasets page (its body: :mod:`app_pages.datasets`)."""
from app_pages.datasets import render
from app_pages.navigation import page_or_app

page_or_app(render)
