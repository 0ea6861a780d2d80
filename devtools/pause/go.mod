module aim-crossplane.local/pause

go 1.26
