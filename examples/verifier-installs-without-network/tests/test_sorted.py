def test_sorted():
    assert open("/app/sorted.txt").read().split() == ["1", "2", "3", "10"]
