package main

import (
	"fmt"

	"github.com/sift-pubsub/sift/router/certs"
	"github.com/spf13/cobra"
)

func init() {
	certsCmd := &cobra.Command{
		Use:   "certs",
		Short: "Manage a deployment's certificates",
	}
	var hosts []string
	initCmd := &cobra.Command{
		Use:   "init DIR [--host NAME ...]",
		Short: "Write a CA and certificates for routers and clients",
		Long: `Init writes a new deployment CA and the certificates routers and clients
present to each other (mutual TLS) into DIR: ca.pem, node.pem, node-key.pem,
client.pem, client-key.pem, and ca-key.pem for issuing more later. The node
certificate is valid for localhost, 127.0.0.1, ::1 and every --host (a DNS
name or an IP address). Init refuses to overwrite existing files.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := certs.Init(args[0], hosts); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "wrote %s, %s, %s, %s, %s, %s in %s\n",
				certs.CAFile, certs.CAKeyFile, certs.NodeFile, certs.NodeKeyFile, certs.ClientFile, certs.ClientKeyFile, args[0])
			return nil
		},
	}
	initCmd.Flags().StringArrayVar(&hosts, "host", nil, "a DNS name or IP address for the node certificate (repeatable)")
	certsCmd.AddCommand(initCmd)
	rootCmd.AddCommand(certsCmd)
}
