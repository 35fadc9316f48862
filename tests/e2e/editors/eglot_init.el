;;; The README's Emacs configuration, exactly as a user would write it in init.el.
(with-eval-after-load 'eglot
  (add-to-list 'eglot-server-programs '((python-mode python-ts-mode) . ("stet" "serve"))))
(setq eglot-confirm-server-initiated-edits nil)  ; Stet's accept edits the buffer: don't ask y/n each time
(add-hook 'python-mode-hook #'eglot-ensure)
