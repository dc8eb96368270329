def test_stats_has_three_integers():
    # Flaw on purpose: the shape is checked, the values are not.
    lines = open("/app/stats.txt").read().split()
    assert len(lines) == 3
    assert all(x.lstrip("-").isdigit() for x in lines)
