from pathlib import Path


def test_the_page_renders():
    page = Path("/app/fixtures/page.html").read_text().split()
    assert Path("/app/out.html").read_text().split() == page
