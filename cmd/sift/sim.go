package main

import "github.com/spf13/cobra"

// simParentCmd returns the "sim" command that groups the simulators (sift sim
// scribe, sift sim durable, ...), creating it and adding it to rootCmd the
// first time. Every simulator file calls it from its init instead of
// creating its own "sim" command, so the files can be added in any order.
func simParentCmd() *cobra.Command {
	for _, c := range rootCmd.Commands() {
		if c.Name() == "sim" {
			return c
		}
	}
	c := &cobra.Command{
		Use:   "sim",
		Short: "Run deterministic simulators and print their reports",
	}
	rootCmd.AddCommand(c)
	return c
}
