"""The three-letter names every cron dialect reads: months (January first) and days of the
week (Sunday first), in lower case; and the five fields' bounds the dialects share."""

MONTH_NAMES = ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov",
               "dec")
WEEKDAY_NAMES = ("sun", "mon", "tue", "wed", "thu", "fri", "sat")

#: field name, lowest and highest value, names: Vixie cron's (Debian's, cronie's), where
#: Sunday is 0 or 7
FIELDS: tuple[tuple[str, int, int, tuple[str, ...]], ...] = (
    ("minute", 0, 59, ()),
    ("hour", 0, 23, ()),
    ("day-of-month", 1, 31, ()),
    ("month", 1, 12, MONTH_NAMES),
    ("day-of-week", 0, 7, WEEKDAY_NAMES),
)
#: the same with days of the week 0-6 only (robfig/cron's bounds, GitHub's workflow parser)
FIELDS_WEEK_0_6 = (*FIELDS[:4], ("day-of-week", 0, 6, WEEKDAY_NAMES))
