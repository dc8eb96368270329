from pathlib import Path

OUT = Path("/app/by_customer")


def test_one_file_per_customer():
    for customer in ("acme", "globex", "initech"):
        assert (OUT / f"{customer}.csv").is_file(), customer


def test_the_folder_holds_csv_files():
    assert all(p.suffix == ".csv" for p in OUT.iterdir())
