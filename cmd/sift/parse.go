package main

import (
	"fmt"

	"github.com/sift-pubsub/sift/match"
	"github.com/spf13/cobra"
)

func init() {
	rootCmd.AddCommand(&cobra.Command{
		Use:   "parse 'FILTER'",
		Short: "Print a filter in canonical form, or the error with its column",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			f, err := match.Parse(args[0])
			if err != nil {
				return fmt.Errorf("parse: %w", err)
			}
			fmt.Fprintln(cmd.OutOrStdout(), f)
			return nil
		},
	})
}
