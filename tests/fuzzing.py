"""How many cases a fuzzer draws: the everyday suite's share, or ten times it
under ``pytest --hypothesis-profile=fuzz``."""
from hypothesis import settings

DEEP = 10   # the fuzz profile's multiple of the everyday counts


def fuzz_cases(everyday: int) -> int:
    return everyday * DEEP if settings.get_current_profile_name() == "fuzz" else everyday
