package fakesystemd

import (
	"context"
	"fmt"
	"strings"
)

// Unit is a service the fake systemd starts and stops, such as
// fakekubelet.Service.
type Unit interface {
	Start(ctx context.Context) error
	Stop(ctx context.Context) error
	// Restart stops the unit's process, waits for it to exit, and starts
	// a new one (starting one when none ran).
	Restart(ctx context.Context) error
	Active() bool
}

// Units answers systemctl's verbs on the named units (full names, e.g.
// "kubelet.service") with systemctl's exit statuses:
//   - daemon-reload: 0 (units read their files at each start);
//   - start, stop, restart: 0, or 1 with "Job for <unit> failed: <error>"
//     when the unit's method fails, or 5 and "Unit <unit> not found." for a
//     unit not in the map (no unit given: 1);
//   - is-active: "active" or "inactive" per unit, 0 when all are active,
//     else 3 (an unknown unit is inactive, as for systemctl);
//   - any other verb: 1, "Unknown command verb <verb>.".
func Units(units map[string]Unit) Handler {
	return func(ctx context.Context, c Call) Reply {
		switch c.Verb {
		case "daemon-reload":
			return Reply{}
		case "is-active":
			var out strings.Builder
			code := 0
			for _, name := range c.Units {
				if u := units[name]; u != nil && u.Active() {
					out.WriteString("active\n")
				} else {
					out.WriteString("inactive\n")
					code = 3
				}
			}
			if len(c.Units) == 0 {
				return Reply{Code: 1, Stderr: "Too few arguments.\n"}
			}
			return Reply{Code: code, Stdout: out.String()}
		case "start", "stop", "restart":
			if len(c.Units) == 0 {
				return Reply{Code: 1, Stderr: "Too few arguments.\n"}
			}
			for _, name := range c.Units {
				if units[name] == nil {
					return Reply{Code: 5, Stderr: fmt.Sprintf("Failed to %s %s: Unit %s not found.\n", c.Verb, name, name)}
				}
			}
			for _, name := range c.Units {
				u := units[name]
				do := map[string]func(context.Context) error{"start": u.Start, "stop": u.Stop, "restart": u.Restart}[c.Verb]
				if err := do(ctx); err != nil {
					return Reply{Code: 1, Stderr: fmt.Sprintf("Job for %s failed: %v\n", name, err)}
				}
			}
			return Reply{}
		case "":
			return Reply{Code: 1, Stderr: "systemctl (test bed): no verb given\n"}
		}
		return Reply{Code: 1, Stderr: fmt.Sprintf("Unknown command verb %s.\n", c.Verb)}
	}
}
