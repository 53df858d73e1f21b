print("rosterctl")
