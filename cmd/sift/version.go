package main

import (
	"fmt"

	"github.com/sift-pubsub/sift/internal/buildinfo"
	"github.com/spf13/cobra"
)

func init() {
	rootCmd.AddCommand(&cobra.Command{
		Use:   "version",
		Short: "Print the build's version, VCS revision and Go version",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			fmt.Fprintln(cmd.OutOrStdout(), "sift", buildinfo.Read())
			return nil
		},
	})
}
