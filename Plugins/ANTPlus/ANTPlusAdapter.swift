// ANT+ adapter
