def is_prime(n):
    return n > 1 and all(n % d for d in range(2, int(n ** 0.5) + 1))


def test_primes():
    lines = open("/app/primes.txt").read().split()
    values = [int(x) for x in lines]
    assert len(values) == 300
    assert all(is_prime(v) for v in values)
    assert values == sorted(set(values))
    assert values[-1] == 1987
