from grading import expected_ranking, read_ranking


def test_ranking_is_by_score_then_name():
    assert read_ranking("/app/ranking.txt") == expected_ranking("/app/scores.csv")
