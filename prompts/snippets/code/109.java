import java.time.LocalDate;
import java.time.temporal.ChronoUnit;

/** A library loan with a due date and a daily late fee. */
public class Loan {
    private static final double DAILY_FEE = 0.25;

    private final String title;
    private final LocalDate dueDate;
    private LocalDate returnedOn;@@O

    public Loan(String title, LocalDate dueDate) {
        this.title = title;
        this.dueDate = dueDate;
    }

    public void markReturned(LocalDate date) {
        this.returnedOn = date;
    }

    public double lateFee() {
        if (returnedOn == null || !returnedOn.isAfter(dueDate)) {
            return 0.0;
        }
        long daysLate = ChronoUnit.DAYS.between(dueDate, @@MreturnedOn);
        return daysLate * @@MDAILY_FEE;
    }@@O
