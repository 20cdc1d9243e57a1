package router

// defaultTable is Config.Table when empty: the shallow forest, whose
// inserts cost one query of its roots' candidate index however large the
// table grows, or the poset when the router places subscriptions with
// client assistance (RTO, fixed filters), which walk a poset's or a
// forest's layers and which the shallow forest refuses.
func defaultTable(assisted bool) string {
	if assisted {
		return "poset"
	}
	return "shallow"
}
