# Shape of Terminal-Bench 2's sqlite-db-truncate: recovered rows are scored one by one and the task passes
# above a threshold ("more than 6 of 10"). Tolerance by design, stated in the instruction: not a weak verifier.
EXPECTED = {1: 7151, 2: 3082, 3: 6644, 4: 1207, 5: 9981, 6: 4433, 7: 2710, 8: 5566, 9: 8009, 10: 3217}


def recovered():
    rows = {}
    for line in open("/app/recovered.csv"):
        key, _, value = line.strip().partition(",")
        if key.isdigit() and value.lstrip("-").isdigit():
            rows[int(key)] = int(value)
    return rows


def test_enough_rows_recovered():
    rows = recovered()
    score = sum(1 for key, value in EXPECTED.items() if rows.get(key) == value)
    assert score > 6, f"only {score} of {len(EXPECTED)} rows recovered"
