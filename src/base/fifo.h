/* cjrt: a singly linked FIFO kept as a head and a tail pointer (both NULL when empty), as the
 * thread pool's task queue and a launch's mailbox and open meetings are. */
#ifndef CJ_BASE_FIFO_H
#define CJ_BASE_FIFO_H

/* Appends node x, whose link field NEXT is already NULL, to the queue head..tail. */
#define CJ_FIFO_APPEND(head, tail, x, NEXT) \
  do {                                      \
    if (tail)                               \
      (tail)->NEXT = (x);                   \
    else                                    \
      (head) = (x);                         \
    (tail) = (x);                           \
  } while (0)

#endif
