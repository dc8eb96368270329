from pathlib import Path


def test_the_sentence_is_decrypted():
    want = Path("/tests/plain_expected.txt").read_text().strip()
    assert Path("/app/plain.txt").read_text().strip() == want
