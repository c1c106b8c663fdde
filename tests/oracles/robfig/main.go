// The oracle of tests/test_kubernetes_cron.py: robfig/cron v3's ParseStandard, which the
// Kubernetes API server validates a CronJob's schedule with, and Next, which the CronJob
// controller computes its firings with. Built against Debian's golang-github-robfig-cron-dev
// (3.0.1, the version Kubernetes vendors) by tests/oracles/robfig_oracle.py.
// stdin: lines "ZONE<TAB>BASE(RFC3339)<TAB>N<TAB>SCHEDULE"; stdout: one JSON object per line,
// the parser's error or the next N firings after BASE in ZONE (UTC, RFC 3339).
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	cron "github.com/robfig/cron/v3"
)

type answer struct {
	Expr  string   `json:"expr"`
	Error string   `json:"error,omitempty"`
	Next  []string `json:"next"`
}

func main() {
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 1<<20), 1<<20)
	out := json.NewEncoder(os.Stdout)
	for in.Scan() {
		parts := strings.SplitN(in.Text(), "\t", 4)
		loc, err := time.LoadLocation(parts[0])
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		base, err := time.Parse(time.RFC3339, parts[1])
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		n, _ := strconv.Atoi(parts[2])
		a := answer{Expr: parts[3], Next: []string{}}
		sched, err := cron.ParseStandard(parts[3])
		if err != nil {
			a.Error = err.Error()
		} else {
			t := base.In(loc)
			for i := 0; i < n; i++ {
				t = sched.Next(t)
				if t.IsZero() {
					break
				}
				a.Next = append(a.Next, t.UTC().Format(time.RFC3339))
			}
		}
		out.Encode(a)
	}
}
