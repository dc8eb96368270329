import json


def test_counts_match_expected():
    expected = json.load(open("/tests/expected.json"))
    assert json.load(open("/app/counts.json")) == expected
