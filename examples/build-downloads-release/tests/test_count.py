def test_count():
    assert open("/app/count.txt").read().split() == ["5"]
