import sys

import pytest

sys.path.insert(0, "/app")


@pytest.fixture
def slugify():
    from slug import slugify as fn

    return fn
