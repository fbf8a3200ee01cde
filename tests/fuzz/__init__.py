"""The contract fuzz: seeded mutations of every fixture (:mod:`fuzz.mutators`), the
cases over every agent's home (:mod:`fuzz.cases`) and what each case must hold
(:mod:`fuzz.checks`); run by ``tests/test_fuzz.py``."""
