"""`aim plan`: where a set of AIM manifests ends up, composed in rounds with no cluster."""
