"""Claims checked in Part IV, chapter *Which recalibrator, for which utility* (paper 001, Sec. 5
and App. C): the printed tables' internal consistency and the verbal conclusions on our data."""
