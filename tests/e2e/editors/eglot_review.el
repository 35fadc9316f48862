;;; A review in real Emacs + eglot, in batch mode (tests/e2e/test_emacs.py).
;;
;; Batch Emacs has no command loop: each action is run as a command (pre/post-command hooks,
;; where eglot-ensure connects), and then the idle timers that are due are fired by hand, the
;; way an idle Emacs would fire them (eglot sends didChange from one). Observations are written
;; as JSON lines to the file named by STET_EMACS_OUT.

(require 'eglot)
(require 'json)
(require 'cl-lib)

(defvar stet-out (getenv "STET_EMACS_OUT"))

(defun stet-note (key value)
  (with-temp-buffer
    (insert (json-encode (list (cons 'key key) (cons 'value value))) "\n")
    (append-to-file (point-min) (point-max) stet-out)))

(defun stet-pump (seconds)
  "Process the server's messages for SECONDS."
  (let ((end (+ (float-time) seconds)))
    (while (< (float-time) end)
      (accept-process-output nil 0.05))))

(defun stet-idle ()
  "Be idle: fire the idle timers (once), as the command loop does when the user pauses."
  (dolist (timer (copy-sequence timer-idle-list))
    (timer-event-handler timer))
  (stet-pump 0.3))

(defun stet-command (fn &rest args)
  "Run FN as a command: pre-command hooks, FN, post-command hooks (no idle time yet)."
  (run-hooks 'pre-command-hook)
  (prog1 (apply fn args)
    (run-hooks 'post-command-hook)))

(defun stet-diagnostics ()
  "Stet's diagnostics in this buffer, as (line . message)."
  (cl-loop for d in (flymake-diagnostics)
           for msg = (flymake-diagnostic-text d)
           when (string-match-p "Stet" msg)
           collect (cons (line-number-at-pos (flymake-diagnostic-beg d)) msg)))

(defun stet-wait-diagnostics (pred what)
  "Be idle until PRED holds of the diagnostics (a busy machine may take long: 120 s at most)."
  (let ((end (+ (float-time) 120)))
    (while (and (not (funcall pred (stet-diagnostics))) (< (float-time) end))
      (stet-idle))
    (stet-note what (length (stet-diagnostics)))))

(defun stet-code-action (line title-prefix)
  "At LINE, run the code action whose title starts with TITLE-PREFIX, as picked from the menu."
  (goto-char (point-min))
  (forward-line (1- line))
  (cl-letf (((symbol-function 'completing-read)
             (lambda (_prompt items &rest _)
               (or (cl-find-if (lambda (item) (string-prefix-p title-prefix (car item))) items)
                   (error "no code action %s in %S" title-prefix (mapcar #'car items)))
               (car (cl-find-if (lambda (item) (string-prefix-p title-prefix (car item))) items)))))
    (let ((start (float-time))
          (last-nonmenu-event ?\r))  ; chosen with the keyboard: the completing-read menu
      (stet-command #'call-interactively #'eglot-code-actions)
      (stet-note (concat "ms:" title-prefix) (round (* 1000 (- (float-time) start)))))))

(defun stet-open (file)
  (stet-command #'find-file file)
  (let ((end (+ (float-time) 120)))  ; the server's start: seconds on a busy machine
    (while (and (not (eglot-current-server)) (< (float-time) end))
      (stet-pump 0.1)))
  (stet-note "connected" (if (eglot-current-server) t :json-false)))

(condition-case err
    (let ((file (expand-file-name "app.py")))
      (setq flymake-no-changes-timeout 0.1)
      (stet-open file)
      ;; 1. The three proposed hunks show as diagnostics.
      (stet-wait-diagnostics (lambda (ds) (= (length ds) 3)) "diagnostics-before")
      (stet-note "lines" (sort (mapcar #'car (stet-diagnostics)) #'<))
      ;; 2. Accept the first through its code action; then Emacs is idle and sends didChange.
      (stet-code-action 2 "Stet: accept this change")
      (stet-note "text-after-accept" (buffer-substring-no-properties (point-min) (point-max)))
      (dotimes (_ 8) (stet-idle))
      (stet-command #'save-buffer)
      (stet-idle)
      ;; 3. Reject the other one.
      (stet-wait-diagnostics (lambda (ds) (= (length ds) 2)) "diagnostics-after-accept")
      (let ((line (car (car (stet-diagnostics)))))
        (stet-code-action line "Stet: reject this change"))
      (dotimes (_ 4) (stet-idle))
      (stet-wait-diagnostics (lambda (ds) (= (length ds) 1)) "diagnostics-after-reject")
      ;; 4. Restart the server: the review comes back as it was (one hunk still pending).
      (stet-command #'eglot-reconnect (eglot-current-server))
      (dotimes (_ 6) (stet-idle))
      (stet-note "reconnected" (if (eglot-current-server) t :json-false))
      (stet-wait-diagnostics (lambda (ds) (= (length ds) 1)) "diagnostics-after-restart")
      (stet-note "text-final" (buffer-substring-no-properties (point-min) (point-max)))
      (stet-command #'eglot-shutdown (eglot-current-server))
      (stet-note "done" t))
  (error (stet-note "error" (format "%S" err))))
