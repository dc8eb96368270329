import configparser
from pathlib import Path

CONFIG = Path("/app/pip.conf")


def settings():
    parser = configparser.ConfigParser()
    parser.read_string(CONFIG.read_text())
    return dict(parser["global"])


def test_config_exists():
    assert CONFIG.exists(), f"File {CONFIG} does not exist"


def test_index_points_at_the_mirror():
    lines = [ln.strip() for ln in CONFIG.read_text().splitlines()]
    assert "index-url = http://mirror.internal.test/simple" in lines


def test_other_settings_kept():
    assert settings() == {"index-url": "http://mirror.internal.test/simple", "timeout": "15", "retries": "2"}
