"""Random schedules over the grammars of Debian's cron and systemd's calendar events, valid
and not: numbers in and out of range, names, ascending and descending ranges, steps, lists,
the Quartz tokens Debian refuses, macros and shorthands in any case, odd separators.

Each generator draws from a ``random.Random``: the recording script passes a seeded one, the
property tests Hypothesis's (``st.randoms()``, which shrinks), so both draw from one grammar.
"""
from __future__ import annotations

import random

# -- Debian's cron ------------------------------------------------------------------------------

#: lowest and highest value of each field, and its names
_CRON_FIELDS = (
    (0, 59, ()),
    (0, 23, ()),
    (1, 31, ()),
    (1, 12, ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov",
             "dec")),
    (0, 7, ("sun", "mon", "tue", "wed", "thu", "fri", "sat")),
)
_LONG_NAMES = ("January", "March", "Monday", "Friday", "sunday", "Sept", "Tues", "thur")
_QUARTZ = ("?", "L", "W", "1W", "LW", "5L", "L-2", "15W", "1#2", "5#3", "2#", "#1", "#")
_MACROS = ("reboot", "yearly", "annually", "monthly", "weekly", "daily", "midnight", "hourly")
#: what separates fields: spaces and tabs, and what a web page pastes (no-break, thin space)
_SEPARATORS = (" ",) * 30 + ("\t", "  ", " \t", "\u00a0", "\u2009", "\u3000")


def _case(rng: random.Random, word: str) -> str:
    return rng.choice([word, word.upper(), word.capitalize(), word.lower(),
                       "".join(rng.choice([c.lower(), c.upper()]) for c in word)])


def _cron_value(rng: random.Random, index: int) -> str:
    lo, hi, names = _CRON_FIELDS[index]
    r = rng.random()
    if r < 0.75:
        value = rng.randint(lo, hi)
    elif r < 0.83:
        value = rng.choice([lo, hi, lo, hi, lo - 1 if lo else hi + 1, hi + 1, 60, 100, 99999,
                            4294967296 + lo])  # (C's atoi cuts that to an int: lo)
    elif r < 0.9 and names:
        return _case(rng, rng.choice(names))
    elif r < 0.93:
        other = _CRON_FIELDS[rng.choice([3, 4])][2]
        return _case(rng, rng.choice(other + _LONG_NAMES))
    else:
        return f"{rng.randint(lo, hi):0{rng.choice([2, 3])}d}"  # leading zeros
    return str(value)


def _cron_step(rng: random.Random, index: int) -> str:
    hi = _CRON_FIELDS[index][1]
    return str(rng.choice([1, 2, 3, 5, 7, 15, 2, 5, 10, hi, hi + 1, 0, 60, 100])) \
        if rng.random() < 0.93 else rng.choice(["mon", "", "01", "1.5", "-1"])


def _cron_item(rng: random.Random, index: int) -> str:
    lo, hi, _ = _CRON_FIELDS[index]
    v = lambda: _cron_value(rng, index)  # noqa: E731
    s = lambda: _cron_step(rng, index)  # noqa: E731
    form = rng.random()
    if form < 0.4:
        return v()
    if form < 0.5:
        return f"{v()}-{v()}"
    if form < 0.6:
        a, b = sorted((rng.randint(lo, hi), rng.randint(lo, hi)))  # an ascending range
        return f"{a}-{b}" + (f"/{s()}" if rng.random() < 0.4 else "")
    if form < 0.65:
        return f"{v()}-{v()}/{s()}"
    if form < 0.8:
        return f"*/{s()}"
    if form < 0.83:
        return f"{v()}/{s()}"
    if form < 0.88:
        return rng.choice(_QUARTZ)
    return rng.choice([f"*-{v()}", f"{v()}#{rng.randint(0, 6)}", f"-{v()}", f"{v()}-",
                       f"{v()}--{v()}", f"{v()}-{v()}-{v()}", "*/", f"/{s()}", f"{v()}//{s()}",
                       f"{v()}-{v()}/{s()}/{s()}", "**", f"*{v()}", "-", ",", "*,*", "*-*"])


def _cron_field(rng: random.Random, index: int) -> str:
    if rng.random() < 0.45:
        return "*"
    text = ",".join(_cron_item(rng, index) for _ in range(rng.choice([1, 1, 1, 2, 3])))
    if rng.random() < 0.03:
        text = rng.choice([f"{text},", f",{text}", text.replace(",", ",,")])
    return text


def debian_schedule(rng: random.Random) -> str:
    """Five time fields, or a macro, as written in a crontab line before its command."""
    if rng.random() < 0.08:
        return "@" + (_case(rng, rng.choice(_MACROS)) if rng.random() < 0.9 else
                      rng.choice(["m0nthly", "every", "", "daily,hourly", "1"]))
    fields = [_cron_field(rng, i) for i in range(5)]
    text = rng.choice(["", "", "", "", " ", "\t"]) + fields[0]
    for field in fields[1:]:
        text += rng.choice(_SEPARATORS) + field
    return text


# -- systemd calendar events --------------------------------------------------------------------

_WEEKDAYS = ("mon", "tue", "wed", "thu", "fri", "sat", "sun")
_WEEKDAYS_LONG = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
_SHORTHANDS = ("minutely", "hourly", "daily", "weekly", "monthly", "yearly", "annually",
               "quarterly", "semiannually", "semi-annually", "biannually", "bi-annually")
_ZONES = ("UTC", "utc", "Europe/Berlin", "America/New_York", "Pacific/Auckland",
          "Australia/Lord_Howe", "Asia/Kolkata", "Europe/Dublin", "Not/AZone", "CET", "Etc/GMT+5")


def _weekday(rng: random.Random) -> str:
    r = rng.random()
    if r < 0.05:
        return rng.choice(["Funday", "Mo", "mond", "7", ""])
    return _case(rng, rng.choice(_WEEKDAYS if r < 0.8 else _WEEKDAYS_LONG))


def _weekdays(rng: random.Random) -> str:
    items = []
    for _ in range(rng.choice([1, 1, 2, 3])):
        if rng.random() < 0.6:
            items.append(_weekday(rng))
        else:
            first, last = _weekday(rng), _weekday(rng)
            if rng.random() < 0.7 and first.lower()[:3] in _WEEKDAYS and \
                    last.lower()[:3] in _WEEKDAYS:  # mostly ascending
                first, last = sorted((first, last), key=lambda d: _WEEKDAYS.index(d.lower()[:3]))
            items.append(f"{first}{rng.choice(['..', '..', '-'])}{last}")
    return ",".join(items) + ("," if rng.random() < 0.05 else "")


def _number(rng: random.Random, lo: int, hi: int, width: int, fraction: bool) -> str:
    r = rng.random()
    if r < 0.8:
        value = rng.randint(lo, hi)
    elif r < 0.95:
        value = rng.choice([lo, hi, lo, hi, lo - 1 if lo else hi + 1, hi + 1])
    else:
        value = rng.choice([0, 1, 100, 2300])
    text = f"{value:0{width}d}" if rng.random() < 0.6 else str(value)
    if fraction and rng.random() < 0.25:
        text += "." + rng.choice(["5", "0", "25", "125", "420000", "0000005", "000001", "9"])
    return text


def _step(rng: random.Random, hi: int, fraction: bool) -> str:
    if fraction and rng.random() < 0.25:
        return rng.choice(["0.5", "1.5", "0.000001", "0.42", "1.77", "0.0000004"])
    return str(rng.choice([1, 2, 3, 4, 5, 6, 7, 10, 15, 30, 1, 2, 5, 10, hi, hi + 1, 0, 60]))


def _component(rng: random.Random, lo: int, hi: int, width: int, fraction: bool = False,
               star: float = 0.35) -> str:
    if rng.random() < star:
        return "*"
    items = []
    for _ in range(rng.choice([1, 1, 1, 2, 3])):
        n = lambda: _number(rng, lo, hi, width, fraction)  # noqa: E731
        form = rng.random()
        if form < 0.45:
            items.append(n())
        elif form < 0.55:
            items.append(f"{n()}..{n()}")
        elif form < 0.7:
            items.append(f"{n()}/{_step(rng, hi, fraction)}")
        elif form < 0.75:
            items.append(f"{n()}..{n()}/{_step(rng, hi, fraction)}")
        elif form < 0.95:
            a, b = sorted((rng.randint(lo, hi), rng.randint(lo, hi)))  # an ascending range
            items.append(f"{a:0{width}d}..{b:0{width}d}" + (
                f"/{_step(rng, hi, fraction)}" if rng.random() < 0.5 else ""))
        else:
            items.append(rng.choice([f"*/{_step(rng, hi, fraction)}", f"{n()}-{n()}", "",
                                     f"{n()}..", f"..{n()}", f"{n()}//{n()}", "**"]))
    return ",".join(items)


def _year(rng: random.Random) -> str:
    r = rng.random()
    if r < 0.5:
        return "*"
    if r < 0.65:
        return f"{rng.choice([0, 27, 28, 69, 70, 99]):02d}"  # two-digit years
    return _component(rng, 2026, 2031, 4, star=0) if r < 0.92 else \
        str(rng.choice([1969, 1970, 2199, 2200, 10000]))


def _date(rng: random.Random) -> str:
    month = _component(rng, 1, 12, 2, star=0.5)
    sep = "~" if rng.random() < 0.15 else "-"
    day = _component(rng, 1, 31, 2, star=0.4) if sep == "-" else _component(rng, 1, 7, 2, 0.1)
    if rng.random() < 0.35:
        return f"{month}{sep}{day}"
    return f"{_year(rng)}-{month}{sep}{day}"


def _time(rng: random.Random) -> str:
    hours = _component(rng, 0, 23, 2)
    minutes = _component(rng, 0, 59, 2)
    if rng.random() < 0.4:
        return f"{hours}:{minutes}"
    return f"{hours}:{minutes}:{_component(rng, 0, 59, 2, fraction=True, star=0.2)}"


def calendar_expression(rng: random.Random) -> str:
    """An ``OnCalendar=`` value."""
    r = rng.random()
    zone = f" {rng.choice(_ZONES)}" if rng.random() < 0.2 else ""
    if r < 0.06:
        return _case(rng, rng.choice(_SHORTHANDS)) + zone
    if r < 0.08:
        return f"@{rng.choice([0, 1493187147, 1800000000, 88588582097858858])}" + zone
    parts = []
    if rng.random() < 0.3:
        parts.append(_weekdays(rng))
    if rng.random() < 0.7:
        parts.append(_date(rng))
    if rng.random() < 0.8 or not parts:
        parts.append(_time(rng))
    text = rng.choice([" "] * 20 + ["  ", "\t"]).join(parts) + zone
    return text + (" " if rng.random() < 0.02 else "")
