tf_keras_dense 7 1 0.0001 1e-05
tf_keras_conv 13 1 0.0001 1e-05
tf_train_step 6 6 0.0001 1e-05
tf_softmax_layernorm 3 3 0.0001 1e-05
tf_while_loop 2 2 1e-05 1e-05
tf_gather_scatter 4 10 1e-05 1e-05
tf_int_ops 2 14 1e-05 1e-05
tf_reductions_shapes 1 10 0.0001 1e-05
