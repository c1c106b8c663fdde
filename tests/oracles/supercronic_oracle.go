// The supercronic oracle: supercronic's own crontab reader (crontab.ParseCrontab) and cron
// expression library (cronexpr), driven as supercronic drives them.
//
// It is not built from this repository alone: tests/oracles/supercronic.py copies this file
// beside supercronic's `cronexpr` and `crontab` packages (a checkout of
// github.com/aptible/supercronic) and a stand-in for logrus (the only import the two
// packages have outside the standard library), then runs `go build` offline. See that
// file's `build`.
//
// Input: one JSON string per line on stdin. With -files each is a whole crontab file;
// otherwise each is one crontab line. Output: one JSON object per input line.
//
// For every job it prints the first -n start times (Unix seconds) from each -at base
// ("Zone@2006-01-02T15:04:05", a local time of that zone), as supercronic's scheduling
// loop (cron.startFunc) computes them: next = Expression.Next(last), and when that is not
// after the clock, supercronic sets the clock's time as `last` and asks again (it spins
// until Next lies ahead). Jobs are taken to finish at once.
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/aptible/supercronic/crontab"
)

type job struct {
	Schedule string             `json:"schedule"`
	Command  string             `json:"command"`
	Next     map[string][]int64 `json:"next,omitempty"`
	// runs and shortest gap between starts on the day before a -days base and on the day
	// itself
	Days map[string]dayFacts `json:"days,omitempty"`
}

type dayFacts struct {
	Runs int   `json:"runs"`
	Gap  int64 `json:"gap"` // shortest gap (seconds) between starts within the day and next to it; -1 none
}

type answer struct {
	Input    string            `json:"input"`
	Ok       bool              `json:"ok"`
	Error    string            `json:"error,omitempty"`
	Panic    string            `json:"panic,omitempty"`
	Timezone string            `json:"timezone,omitempty"`
	Environ  map[string]string `json:"environ,omitempty"`
	Jobs     []job             `json:"jobs"`
}

type base struct {
	key     string
	at      time.Time // the local time in its zone, as Go reads it
	written time.Time // the local time as written (read as UTC)
}

func parseBases(text string) []base {
	var out []base
	for _, item := range strings.Split(text, ",") {
		item = strings.TrimSpace(item)
		if item == "" {
			continue
		}
		zoneName, local, ok := strings.Cut(item, "@")
		if !ok {
			fmt.Fprintf(os.Stderr, "bad base %q\n", item)
			os.Exit(2)
		}
		zone, err := time.LoadLocation(zoneName)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
		at, err := time.ParseInLocation("2006-01-02T15:04:05", local, zone)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
		written, _ := time.Parse("2006-01-02T15:04:05", local)
		out = append(out, base{item, at, written})
	}
	return out
}

// step is one turn of supercronic's loop: the next start after a start at `last` (the
// clock just past it), or the zero time when the expression has no further time.
func step(expr crontab.Expression, last time.Time) time.Time {
	next := expr.Next(last)
	// not ahead of the clock: supercronic takes the clock's time and asks again
	for clock := last; !next.IsZero() && !next.After(clock); {
		clock = clock.Add(time.Second)
		next = expr.Next(clock)
	}
	return next
}

func starts(expr crontab.Expression, from time.Time, n int) []int64 {
	out := []int64{}
	last := from
	for len(out) < n {
		last = step(expr, last)
		if last.IsZero() {
			break
		}
		out = append(out, last.Unix())
	}
	return out
}

// dayStart is the first instant of a local day: its midnight, or, where the clocks skip
// midnight, the instant they change.
func dayStart(zone *time.Location, year int, month time.Month, day int) time.Time {
	date := time.Date(year, month, day, 0, 0, 0, 0, time.UTC) // (day 0: the month before)
	t := time.Date(date.Year(), date.Month(), date.Day(), 0, 0, 0, 0, zone)
	for t.Day() != date.Day() {
		t = t.Add(time.Minute)
	}
	return t
}

// day: how many starts fall in the two local days that end with the one of `at` (a start
// can come a day early: Go moves a time that does not exist back), and the shortest gap
// between two consecutive starts of which one falls in them (-1: none). The walk begins at
// the last start before them: a base before them whose next start comes before them (two
// days back, or twice as far until one does, up to about three years), then the latest
// such base (a bisection, to the second).
func day(expr crontab.Expression, b base) dayFacts {
	zone, date := b.at.Location(), b.written
	from := dayStart(zone, date.Year(), date.Month(), date.Day()-1)
	end := dayStart(zone, date.Year(), date.Month(), date.Day()+1)
	early := func(at time.Time) bool { next := step(expr, at); return !next.IsZero() && next.Before(from) }
	lo := from.AddDate(0, 0, -2)
	for back := 2; back < 1024 && !early(lo); back *= 2 {
		lo = from.AddDate(0, 0, -2*back)
	}
	if early(lo) {
		for hi := from; hi.Sub(lo) > time.Second; {
			mid := lo.Add(hi.Sub(lo) / 2).Truncate(time.Second)
			if early(mid) {
				lo = mid
			} else {
				hi = mid
			}
		}
	}
	facts := dayFacts{Gap: -1}
	var prev time.Time
	for last := step(expr, lo); !last.IsZero(); last = step(expr, last) {
		inside := !last.Before(from) && last.Before(end)
		if inside {
			facts.Runs++
		}
		if !prev.IsZero() && (inside || !prev.Before(from)) {
			if gap := int64(last.Sub(prev) / time.Second); facts.Gap < 0 || gap < facts.Gap {
				facts.Gap = gap
			}
		}
		if !last.Before(end) {
			break
		}
		prev = last
	}
	return facts
}

func main() {
	files := flag.Bool("files", false, "each input is a whole crontab file")
	n := flag.Int("n", 50, "start times per base")
	at := flag.String("at", "UTC@2026-01-01T00:00:00", "bases: Zone@local-time,...")
	days := flag.String("days", "", "local days (Zone@2006-01-02T00:00:00,...) to count runs and gaps in")
	flag.Parse()
	bases := parseBases(*at)
	dayBases := parseBases(*days)

	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 1<<20), 1<<24)
	out := json.NewEncoder(os.Stdout)
	out.SetEscapeHTML(false)
	for in.Scan() {
		var text string
		if err := json.Unmarshal(in.Bytes(), &text); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
		if !*files {
			text += "\n"
		}
		if err := out.Encode(read(text, bases, dayBases, *n)); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
	}
	if err := in.Err(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
}

func read(text string, bases, dayBases []base, n int) (a answer) {
	a = answer{Input: text, Jobs: []job{}}
	defer func() {
		if r := recover(); r != nil { // supercronic crashes: it runs nothing
			a.Ok, a.Jobs, a.Panic = false, []job{}, fmt.Sprint(r)
		}
	}()
	tab, err := crontab.ParseCrontab(strings.NewReader(text))
	if err != nil {
		a.Error = err.Error()
		return a
	}
	a.Ok = true
	a.Timezone = tab.Context.Timezone.String()
	a.Environ = tab.Context.Environ
	for _, j := range tab.Jobs {
		got := job{Schedule: j.Schedule, Command: j.Command, Next: map[string][]int64{},
			Days: map[string]dayFacts{}}
		for _, b := range bases {
			got.Next[b.key] = starts(j.Expression, b.at, n)
		}
		for _, b := range dayBases {
			got.Days[b.key] = day(j.Expression, b)
		}
		a.Jobs = append(a.Jobs, got)
	}
	return a
}
