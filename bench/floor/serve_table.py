"""``table.py`` served as ``serve.py`` serves the app: what its script imports (pandas, numpy,
pyarrow for the data grid) is imported while the server starts, so that the floor is measured at
its best settings, as ours is."""
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import streamlit as st


@asynccontextmanager
async def warm_up(_app: st.App) -> AsyncIterator[None]:
    import numpy  # noqa: F401
    import pandas  # noqa: F401
    import pyarrow  # noqa: F401
    yield


app = st.App(Path(__file__).with_name("table.py"), lifespan=warm_up)
