package main

import (
	"fmt"

	"github.com/sift-pubsub/sift/match"
	"github.com/spf13/cobra"
)

func init() {
	rootCmd.AddCommand(&cobra.Command{
		Use:   "cover 'F1' 'F2'",
		Short: "Print true if F1 covers F2 (every event matching F2 matches F1), else false",
		Args:  cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			var fs [2]match.Filter
			for i, text := range args {
				f, err := match.Parse(text)
				if err != nil {
					return fmt.Errorf("cover: filter %d: %w", i+1, err)
				}
				fs[i] = f
			}
			fmt.Fprintln(cmd.OutOrStdout(), match.Covers(fs[0], fs[1]))
			return nil
		},
	})
}
