import pytest


@pytest.mark.parametrize("title,slug", [("Hello, World!", "hello-world"), ("  many   spaces ", "many-spaces"),
                                        ("C3PO & R2D2", "c3po-r2d2"), ("---", ""), ("Already-a-slug", "already-a-slug")])
def test_slugify(slugify, title, slug):
    assert slugify(title) == slug
