import urllib.request


def test_index_is_served():
    with urllib.request.urlopen("http://127.0.0.1:8080/", timeout=10) as res:
        assert res.read().decode().strip() == "Welcome to the benchmark webserver"
