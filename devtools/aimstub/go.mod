module aim-crossplane.local/aimstub

go 1.26
