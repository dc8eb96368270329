def test_total():
    assert open("/app/total.txt").read().strip() == "124"
