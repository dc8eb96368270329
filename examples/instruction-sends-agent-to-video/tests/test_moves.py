EXPECTED = ["open mailbox", "read leaflet", "south", "east", "open window", "enter house"]


def test_moves():
    got = [line.strip() for line in open("/app/moves.txt") if line.strip()]
    assert got == EXPECTED
